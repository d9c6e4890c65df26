FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
ENV NODE_ENV=development HOST=0.0.0.0 PORT=3000
EXPOSE 3000
CMD ["npx", "tsx", "src/main.ts"]
